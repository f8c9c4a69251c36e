package rig;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@SpringBootApplication
@RestController
public class ServiceApp {
    @Value("${eureka.instance.instance-id}")
    private String instanceId;

    public static void main(String[] args) {
        SpringApplication.run(ServiceApp.class, args);
    }

    @GetMapping(value = "/ping", produces = "text/plain")
    public String ping() {
        return instanceId;
    }
}
